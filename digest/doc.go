// Package digest computes statement digests as MySQL 8.0 does: a MySQL-dialect
// lexer, the normalized token stream (literals replaced, lists reduced,
// keywords in their canonical spelling), DIGEST_TEXT and a SHA-256 DIGEST.
//
// # Imports
//
// Standard library only: digest is a leaf of otelpfs's dependency graph.
package digest
