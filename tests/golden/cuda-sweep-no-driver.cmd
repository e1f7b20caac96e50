sweep cuda-explain-gpt.sx
