check knob-wrong-type.sx --set steps=0
