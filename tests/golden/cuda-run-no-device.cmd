run cuda-explain-gpt.sx --device cuda
