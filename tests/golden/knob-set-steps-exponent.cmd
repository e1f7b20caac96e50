check knob-wrong-type.sx --set steps=1e3
