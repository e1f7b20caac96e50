run knob-wrong-type.sx
