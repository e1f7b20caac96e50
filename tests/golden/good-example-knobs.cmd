knobs ../../examples/my-run.sx
