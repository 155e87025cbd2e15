#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Makes a throwaway CA and a certificate it signs for the providers' API names, for the
# HTTPS stand-in (server.mjs). Clients trust the CA through NODE_EXTRA_CA_CERTS=DIR/ca.pem.
#
# usage: tests/standin/make-ca.sh DIR    (writes DIR/ca.pem, DIR/server.pem, DIR/server.key)
set -eu
dir=$1
names="DNS:api.stripe.com,DNS:files.stripe.com,DNS:connect.stripe.com,DNS:meter-events.stripe.com"
names="$names,DNS:api.openai.com,DNS:api.anthropic.com,DNS:attacker.example,DNS:evil.example,IP:127.0.0.3"
mkdir -p "$dir"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=launch throwaway CA" \
	-keyout "$dir/ca.key" -out "$dir/ca.pem" \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign \
	2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=api.stripe.com" \
	-keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' "$names" \
	>"$dir/server.ext"
openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
	-CAcreateserial -days 2 -extfile "$dir/server.ext" -out "$dir/server.pem" 2>/dev/null
# The CA's key is not needed again: nothing else can be signed with it.
rm -f "$dir/ca.key" "$dir/server.csr" "$dir/server.ext" "$dir/ca.srl"
chmod 644 "$dir/ca.pem" "$dir/server.pem"
