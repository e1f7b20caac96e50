chekc tiny.sx
