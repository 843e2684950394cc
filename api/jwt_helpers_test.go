package api_test

import "encoding/base64"

func jwtSegment(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }
func jwtEncode(b []byte) string           { return base64.RawURLEncoding.EncodeToString(b) }
