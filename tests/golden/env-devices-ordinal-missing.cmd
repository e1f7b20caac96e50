run knob-wrong-type.sx --device cuda
