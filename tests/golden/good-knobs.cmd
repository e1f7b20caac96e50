knobs good-knobs.sx
