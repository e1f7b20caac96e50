check lib
