bundle tiny.sx
