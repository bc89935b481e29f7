#!/bin/sh
# Runs `kite inspect --emit=sass` on add; prints its output, or its error
# (which must say what is missing) when it fails.
"$1" inspect "$2" --kernel add --arg 'x=f32[64,64]' --arg 'y=f32[64,64]' --emit=sass 2>&1
exit 0
