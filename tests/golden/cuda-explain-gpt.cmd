explain cuda-explain-gpt.sx --device cuda
