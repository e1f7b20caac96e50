check knob-wrong-type.sx --set microbatches=3
