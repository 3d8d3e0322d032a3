# Sourced by the bench scripts that serve HTTPS: `throwaway_ca DIR` makes a CA of our own and a
# `localhost` leaf it signs (P-256, valid two days) in DIR: ca.pem (what the generator trusts),
# cert.pem and key.pem (what the server serves), as an operator's certificate would be.
throwaway_ca() {
  local d=$1
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=campfire-bench throw-away CA" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign \
    -keyout "$d/ca-key.pem" -out "$d/ca.pem" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=localhost \
    -keyout "$d/key.pem" -out "$d/leaf.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > "$d/leaf.ext"
  openssl x509 -req -in "$d/leaf.csr" -CA "$d/ca.pem" -CAkey "$d/ca-key.pem" -CAcreateserial -days 2 \
    -extfile "$d/leaf.ext" -out "$d/cert.pem" 2>/dev/null
}
