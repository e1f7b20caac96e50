check ../../examples/my-run.sx --variant smoke --set lr=3e-3
