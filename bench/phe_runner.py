"""Runs inside .venv-phe (python-paillier, GPL-3.0: a bench peer, never a veil dependency):
times phe's encryption, addition and decryption with one value per ciphertext, as its users
encrypt model updates. Prints JSON."""

import json
import sys
import time

import phe

count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
public, private = phe.generate_paillier_keypair(n_length=2048)
values = [((i * 7919) % 2000 - 1000) / 997 for i in range(count)]
start = time.perf_counter()
encrypted = [public.encrypt(v) for v in values]
encrypt_seconds = time.perf_counter() - start
start = time.perf_counter()
total = encrypted[0]
for e in encrypted[1:]:
    total = total + e
add_seconds = (time.perf_counter() - start) / (count - 1)
start = time.perf_counter()
decrypted = [private.decrypt(e) for e in encrypted]
decrypt_seconds = time.perf_counter() - start
size = (encrypted[0].ciphertext(be_secure=False).bit_length() + 7) // 8
print(
    json.dumps(
        {
            "encrypt_per_s": count / encrypt_seconds,
            "decrypt_per_s": count / decrypt_seconds,
            "add_seconds": add_seconds,
            "bytes_per_value": size,
            "max_error": max(abs(a - b) for a, b in zip(values, decrypted, strict=True)),
        }
    )
)
