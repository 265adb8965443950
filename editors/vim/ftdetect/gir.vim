" .gir files are glow-rs instruction IR.
autocmd BufRead,BufNewFile *.gir setfiletype gir
