check knob-wrong-type.sx --set seed=99999999999999999999
