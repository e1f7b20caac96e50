explain knob-wrong-type.sx --device cuda
