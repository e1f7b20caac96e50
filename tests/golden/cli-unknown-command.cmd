frobnicate tiny.sx
