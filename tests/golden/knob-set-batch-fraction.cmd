check knob-wrong-type.sx --set batch=8.5
