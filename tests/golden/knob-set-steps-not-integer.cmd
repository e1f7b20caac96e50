check knob-wrong-type.sx --set steps=abc
