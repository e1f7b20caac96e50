run escape-init-from-name.sx
