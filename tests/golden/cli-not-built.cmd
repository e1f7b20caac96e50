run tiny.sx
