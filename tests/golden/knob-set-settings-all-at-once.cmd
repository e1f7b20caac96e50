check knob-wrong-type.sx --set lr=abc --set microbatches=two --set eval-every=-1 --set checkpoint-every=0 --set steps=9223372036854775808
