check def-microbatches.sx --set microbatches=2 --set batch=7
