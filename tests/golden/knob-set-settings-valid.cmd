check knob-wrong-type.sx --set steps=5 --set seed=3 --set precision=bf16 --set eval-every=0 --set checkpoint-every=2
