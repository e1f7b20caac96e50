run escape-invalid-utf8-name.sx
