check no-such-file.sx
