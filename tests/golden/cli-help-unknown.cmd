help E-EVAL-999
