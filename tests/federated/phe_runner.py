"""Runs inside .venv-phe (python-paillier is GPL-3.0, never a veil dependency): decrypts
veil's ciphertexts and encrypts numbers for veil, with the key given on stdin as JSON."""

import json
import sys

import phe

request = json.load(sys.stdin)
public = phe.PaillierPublicKey(request["n"])
private = phe.PaillierPrivateKey(public, request["p"], request["q"])
print(
    json.dumps(
        {
            "decrypted": [private.raw_decrypt(c) for c in request["decrypt"]],
            "encrypted": [public.raw_encrypt(m) for m in request["encrypt"]],
        }
    )
)
