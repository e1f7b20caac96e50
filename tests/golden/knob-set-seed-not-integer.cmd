check knob-wrong-type.sx --set seed=abc
