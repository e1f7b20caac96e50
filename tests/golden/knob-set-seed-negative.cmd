check knob-wrong-type.sx --set seed=-1
