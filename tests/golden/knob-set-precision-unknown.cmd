check knob-wrong-type.sx --set precision=fp16
