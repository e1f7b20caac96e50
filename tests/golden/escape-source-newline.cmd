run escape-source-newline.sx
