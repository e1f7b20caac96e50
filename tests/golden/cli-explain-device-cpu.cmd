explain knob-wrong-type.sx --device cpu
