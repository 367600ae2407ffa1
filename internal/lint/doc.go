// Package lint holds tests that keep otelpfs's architecture true: the
// dependency direction between its packages and the imports each may use.
// It has no code of its own.
package lint
