package main

import "strings"

func stringsReplace(s, old, new string) string { return strings.ReplaceAll(s, old, new) }
func stringsReader(s string) *strings.Reader   { return strings.NewReader(s) }
func contains(s, sub string) bool              { return strings.Contains(s, sub) }
