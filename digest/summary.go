package digest

import (
	"encoding/binary"
	"sync"
	"unicode/utf8"
)

// MaxSummaryLength is the most bytes Summary.Summary holds: longer
// summaries are cut at the boundary of an operation or a target.
const MaxSummaryLength = 255

// Summary holds the OpenTelemetry database semantic-convention attributes
// of one statement, derived from its tokens. No field ever holds a literal
// of the statement: they are built from keywords and identifiers only.
type Summary struct {
	// Summary is db.query.summary: each operation followed by its
	// targets, such as "SELECT orders customers" or
	// "INSERT shipping_details SELECT orders". At most MaxSummaryLength
	// bytes; empty when the statement names no operation.
	Summary string
	// Operation is db.operation.name: the operation of the statement
	// itself (after any WITH clause), such as "SELECT", "INSERT" or
	// "CREATE TABLE".
	Operation string
	// Collection is db.collection.name: the table the statement works on
	// when it names exactly one (possibly more than once), else empty.
	Collection string
	// StoredProcedure is db.stored_procedure.name for CALL, else empty.
	StoredProcedure string
}

// Summarize returns the semantic-convention attributes of sql with the
// default options. sql may be a statement as the client sent it or its
// DIGEST_TEXT: both give the same Summary. It is safe for concurrent use.
func Summarize(sql string) Summary {
	n := defaultPool.Get().(*Normalizer)
	s := n.Summarize(sql)
	defaultPool.Put(n)
	return s
}

// Summarize returns the semantic-convention attributes of sql, lexed with
// n's options (its sql_mode decides, for example, whether "x" is an
// identifier). It does not disturb the Text of the last Result.
func (n *Normalizer) Summarize(sql string) Summary {
	summaryOnce.Do(initSummary)
	n.st.reset(n.cfg.maxDigestLength, nil)
	if n.st.max > 0 {
		n.tk.tokenize(sql, &n.st, &n.cfg)
	}
	if n.sum == nil {
		n.sum = new(summarizer)
	}
	return n.sum.run(n.st.buf)
}

// Target kinds.
const (
	kindTable     uint8 = iota // a table or view: a collection
	kindNamespace              // a database
	kindProcedure              // the procedure of a CALL
	kindOther                  // another named object (trigger, event, ...)
	kindDead                   // dropped
)

// Caps on what one statement records; a summary of MaxSummaryLength bytes
// never needs more.
const (
	maxSumOps     = 256
	maxSumTargets = 256
	maxSumNest    = 64
)

type sumTok struct {
	tok    uint16
	off, n int32 // an identifier's bytes in the stream
}

type sumOp struct {
	words       [4]uint16
	n           uint8
	first, last int32 // its targets, a list through sumTarget.next
}

type sumTarget struct {
	from, to int32 // the name's tokens
	next     int32
	kind     uint8
}

// summarizer walks a statement's normalized token stream: a small
// recursive-descent reader of MySQL's statement shapes, which records each
// operation and the names it reads or writes. It reads only identifiers and
// keywords; literals are already ? in the stream.
type summarizer struct {
	buf     []byte // the token stream
	toks    []sumTok
	i       int
	nest    int
	stop    bool // a routine body follows: read no further statements
	ops     []sumOp
	targets []sumTarget
	ctes    []int32 // the name token of each common table expression
	main    int     // the statement's own operation, or -1
	out     []byte
}

func (s *summarizer) run(buf []byte) Summary {
	s.load(buf)
	s.i, s.nest, s.stop, s.main = 0, 0, false, -1
	s.ops, s.targets, s.ctes = s.ops[:0], s.targets[:0], s.ctes[:0]
	for s.i < len(s.toks) && !s.stop {
		s.statement(s.main < 0)
		for s.i < len(s.toks) && s.toks[s.i].tok != ';' {
			s.i++
		}
		s.i++
	}
	return s.render()
}

// load decodes the stream into s.toks, leaving out optimizer hints.
func (s *summarizer) load(buf []byte) {
	s.buf = buf
	s.toks = s.toks[:0]
	inHint := false
	for i := 0; i+2 <= len(buf); {
		tok := binary.LittleEndian.Uint16(buf[i:])
		i += 2
		switch tok {
		case tokIdent, tokIdentAt:
			if i+2 > len(buf) {
				return
			}
			n := int(binary.LittleEndian.Uint16(buf[i:]))
			i += 2
			if i+n > len(buf) {
				return
			}
			if !inHint {
				t := sumTok{tok: tokIdent, off: int32(i), n: int32(n)}
				if n <= sumRespellMax {
					if k, ok := sumRespell[string(buf[i:i+n])]; ok {
						t = sumTok{tok: k}
					}
				}
				s.toks = append(s.toks, t)
			}
			i += n
			continue
		case tokHintOpen:
			inHint = true
			continue
		case tokHintClose:
			if inHint {
				inHint = false
				continue
			}
		}
		if !inHint && tok < maxToken {
			s.toks = append(s.toks, sumTok{tok: tok})
		}
	}
}

// at returns the token k past the current one, or tokNone past the end.
func (s *summarizer) at(k int) uint16 {
	if j := s.i + k; j < len(s.toks) {
		return s.toks[j].tok
	}
	return tokNone
}

func (s *summarizer) done() bool { return s.i >= len(s.toks) }

// addOp records an operation of the given keywords and returns its index,
// or -1 past the cap.
func (s *summarizer) addOp(words ...uint16) int {
	if len(s.ops) >= maxSumOps {
		return -1
	}
	op := sumOp{first: -1, last: -1}
	op.n = uint8(copy(op.words[:], words))
	s.ops = append(s.ops, op)
	return len(s.ops) - 1
}

// addTarget records the name toks[from:to] as a target of op, once.
func (s *summarizer) addTarget(op int, from, to int, kind uint8) {
	if op < 0 || len(s.targets) >= maxSumTargets {
		return
	}
	if kind == kindTable && to-from == 1 && s.isCTE(from) {
		return // a common table expression: no collection of its own
	}
	o := &s.ops[op]
	for j := o.first; j >= 0; j = s.targets[j].next {
		if s.sameName(int(s.targets[j].from), int(s.targets[j].to), from, to) {
			return
		}
	}
	s.targets = append(s.targets, sumTarget{from: int32(from), to: int32(to), next: -1, kind: kind})
	t := int32(len(s.targets) - 1)
	if o.last >= 0 {
		s.targets[o.last].next = t
	} else {
		o.first = t
	}
	o.last = t
}

func (s *summarizer) isCTE(at int) bool {
	name := s.identBytes(at)
	if name == nil {
		return false
	}
	for _, c := range s.ctes {
		if equalFoldASCII(s.identBytes(int(c)), name) {
			return true
		}
	}
	return false
}

// identBytes returns the bytes of the identifier toks[at], or nil.
func (s *summarizer) identBytes(at int) []byte {
	t := s.toks[at]
	if t.tok != tokIdent {
		return nil
	}
	return s.buf[t.off : t.off+t.n]
}

func equalFoldASCII(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if upper[a[i]] != upper[b[i]] {
			return false
		}
	}
	return true
}

// sameName reports whether the names toks[a:b] and toks[c:d] are the same.
func (s *summarizer) sameName(a, b, c, d int) bool {
	if b-a != d-c {
		return false
	}
	for k := 0; k < b-a; k++ {
		x, y := s.toks[a+k], s.toks[c+k]
		if x.tok != y.tok {
			return false
		}
		if x.tok == tokIdent && string(s.buf[x.off:x.off+x.n]) != string(s.buf[y.off:y.off+y.n]) {
			return false
		}
	}
	return true
}

// isName reports whether t can be (the first part of) a name: an
// identifier, or a keyword MySQL takes for one there (STATUS, USER, ...).
func isName(t uint16) bool {
	return t == tokIdent || sumWord[t] && !sumNotName[t]
}

// name reads a name, "a", "a.b" or "a.b.c", and returns its tokens.
func (s *summarizer) name() (from, to int, ok bool) {
	if !isName(s.at(0)) {
		return 0, 0, false
	}
	from = s.i
	s.i++
	for k := 0; k < 2 && s.at(0) == '.' && (s.at(1) == tokIdent || sumWord[s.at(1)]); k++ {
		s.i += 2
	}
	return from, s.i, true
}

// nameList reads "a, b.c, ..." as targets of op.
func (s *summarizer) nameList(op int, kind uint8) {
	for {
		from, to, ok := s.name()
		if !ok {
			return
		}
		s.addTarget(op, from, to, kind)
		if s.at(0) != ',' {
			return
		}
		s.i++
	}
}

// skipIfExists skips IF EXISTS and IF NOT EXISTS.
func (s *summarizer) skipIfExists() {
	if s.at(0) == kwsIf && (s.at(1) == kwsExists || s.at(1) == kwNot && s.at(2) == kwsExists) {
		s.i += 2
		if s.at(0) == kwsExists {
			s.i++
		}
	}
}

// statement reads one statement from its first token.
func (s *summarizer) statement(top bool) {
	for s.at(0) == kwWith {
		if !s.with() {
			return
		}
	}
	// The statement's own operation comes after its WITH clause.
	first := len(s.ops)
	defer func() {
		if top && s.main < 0 && len(s.ops) > first {
			s.main = first
		}
	}()
	t := s.at(0)
	switch t {
	case '(':
		s.rest()
	case kwsSelect:
		s.query()
	case kwsInsert, kwsReplace:
		s.insert(t)
	case kwsUpdate:
		op := s.addOp(t)
		s.i++
		s.skipModifiers()
		s.tableRefs(op)
		s.rest()
	case kwsDelete:
		s.delete()
	case kwsCall:
		op := s.addOp(t)
		s.i++
		if from, to, ok := s.name(); ok {
			s.addTarget(op, from, to, kindProcedure)
		}
		s.rest()
	case kwsCreate, kwsAlter, kwsDrop:
		s.ddl(t)
	case kwsTruncate:
		op := s.addOp(t, kwsTable)
		s.i++
		if s.at(0) == kwsTable {
			s.i++
		}
		s.nameList(op, kindTable)
	case kwsRename:
		s.i++
		switch s.at(0) {
		case kwsTable, kwsTables:
			op := s.addOp(t, s.at(0))
			s.i++
			for !s.done() {
				if from, to, ok := s.name(); ok {
					s.addTarget(op, from, to, kindTable)
				} else if u := s.at(0); u == kwsTo || u == ',' {
					s.i++
				} else {
					break
				}
			}
		case kwsUser:
			s.addOp(t, kwsUser)
		default:
			s.addOp(t)
		}
	case kwsBegin, kwsCommit, kwsSavepoint, kwsPrepare, kwsExecute, kwsGrant, kwsRevoke:
		s.addOp(t)
	case kwsStart, kwsUnlock:
		if u := s.at(1); sumWord[u] {
			s.addOp(t, u)
		} else {
			s.addOp(t)
		}
	case kwsRollback:
		if s.at(1) == kwsTo || s.at(1) == kwsWork && s.at(2) == kwsTo {
			s.addOp(t, kwsTo, kwsSavepoint)
		} else {
			s.addOp(t)
		}
	case kwsRelease, kwsDeallocate:
		if u := s.at(1); u == kwsSavepoint || u == kwsPrepare {
			s.addOp(t, u)
		} else {
			s.addOp(t)
		}
	case kwsSet, kwsValues, kwsDo:
		s.addOp(t)
		s.i++
		s.rest()
	case kwsTable:
		op := s.addOp(t)
		s.i++
		if from, to, ok := s.name(); ok {
			s.addTarget(op, from, to, kindTable)
		}
		s.rest()
	case kwsShow:
		s.show()
	case kwsUse:
		op := s.addOp(t)
		s.i++
		if from, to, ok := s.name(); ok {
			s.addTarget(op, from, to, kindNamespace)
		}
	case kwsExplain, kwsDesc:
		s.explain()
	case kwsLock:
		s.lock()
	case kwsLoad:
		s.loadData()
	case kwsAnalyze, kwsOptimize, kwsCheck, kwsRepair, kwsChecksum:
		s.i++
		for u := s.at(0); u == kwsNoWriteToBinlog || u == kwsLocal; u = s.at(0) {
			s.i++
		}
		if u := s.at(0); u == kwsTable || u == kwsTables {
			op := s.addOp(t, u)
			s.i++
			s.nameList(op, kindTable)
		} else {
			s.addOp(t)
		}
	case kwsHandler:
		op := s.addOp(t)
		s.i++
		if from, to, ok := s.name(); ok {
			s.addTarget(op, from, to, kindTable)
		}
	default:
		if sumWord[t] {
			s.addOp(t)
		}
	}
}

func (s *summarizer) skipModifiers() {
	for sumModifier[s.at(0)] {
		s.i++
	}
}

// with reads a WITH clause up to the statement it belongs to, and reports
// whether it had that shape.
func (s *summarizer) with() bool {
	s.i++
	if s.at(0) == kwsRecursive {
		s.i++
	}
	for {
		if !isName(s.at(0)) {
			return false
		}
		at := s.i
		s.i++
		if s.at(0) == '(' {
			s.skipParen()
		}
		if s.at(0) != kwsAs || s.at(1) != '(' {
			return false
		}
		s.i++
		if len(s.ctes) < maxSumTargets {
			s.ctes = append(s.ctes, int32(at))
		}
		s.paren()
		if s.at(0) != ',' {
			return true
		}
		s.i++
	}
}

// rest reads to the end of the current parenthesis or statement, for the
// subqueries there.
func (s *summarizer) rest() {
	for !s.done() {
		switch t := s.at(0); t {
		case ')', ';':
			return
		case '(':
			s.paren()
		case kwsSelect:
			s.query()
		case kwWith:
			if !s.with() {
				s.i++
			}
		default:
			s.i++
		}
	}
}

// paren reads a parenthesis, from '(' past its ')'.
func (s *summarizer) paren() {
	if s.nest >= maxSumNest {
		s.skipParen()
		return
	}
	s.nest++
	s.i++
	s.rest()
	if s.at(0) == ')' {
		s.i++
	}
	s.nest--
}

// skipParen skips a parenthesis without looking inside.
func (s *summarizer) skipParen() {
	depth := 0
	for ; !s.done(); s.i++ {
		switch s.at(0) {
		case '(':
			depth++
		case ')':
			depth--
			if depth <= 0 {
				s.i++
				return
			}
		case ';':
			return
		}
	}
}

// query reads a query expression: SELECTs, their FROM clauses, set
// operations, up to the end of the parenthesis or statement.
func (s *summarizer) query() {
	op := -1
	for !s.done() {
		switch t := s.at(0); t {
		case ')', ';':
			return
		case kwsSelect:
			op = s.addOp(t)
			s.i++
		case kwsFrom:
			s.i++
			if op >= 0 {
				s.tableRefs(op)
			}
		case '(':
			s.paren()
		case kwWith:
			if !s.with() {
				s.i++
			}
		default:
			s.i++
		}
	}
}

// subqueryAt reports whether a query starts k tokens on.
func (s *summarizer) subqueryAt(k int) bool {
	switch s.at(k) {
	case kwsSelect, kwWith, kwsValues, kwsTable:
		return true
	}
	return false
}

// tableRefs reads a FROM clause's table references (or UPDATE's, or
// DELETE's), recording the tables as targets of op; derived tables are
// read as subqueries.
func (s *summarizer) tableRefs(op int) {
	expect := true // the next name is a table
	for !s.done() {
		t := s.at(0)
		switch {
		case t == ')' || t == ';' || sumEndsTables[t]:
			return
		case t == '(':
			if expect && !s.subqueryAt(1) && s.nest < maxSumNest {
				// Nested table references: (a JOIN b).
				s.nest++
				s.i++
				s.tableRefs(op)
				s.rest()
				if s.at(0) == ')' {
					s.i++
				}
				s.nest--
			} else {
				s.paren()
			}
			expect = false
		case t == ',' || t == kwsJoin || t == kwsStraightJoin:
			s.i++
			expect = true
		case t == kwsOn:
			s.i++
			s.condition()
		case t == kwsUsing:
			if s.at(1) != '(' {
				return // DELETE ... USING
			}
			s.i++
			s.paren()
		case sumJoinWord[t] || t == kwsLateral:
			s.i++
		case expect && isName(t):
			from, to, _ := s.name()
			s.addTarget(op, from, to, kindTable)
			expect = false
		default:
			s.i++
			expect = false
		}
	}
}

// condition reads a join condition up to the next join or clause.
func (s *summarizer) condition() {
	for !s.done() {
		t := s.at(0)
		switch {
		case t == ')' || t == ';' || t == ',' || t == kwsJoin || t == kwsStraightJoin || sumEndsTables[t]:
			return
		case sumJoinWord[t] && s.at(1) != '(':
			return
		case t == '(':
			s.paren()
		default:
			s.i++
		}
	}
}

func (s *summarizer) insert(t uint16) {
	op := s.addOp(t)
	s.i++
	s.skipModifiers()
	if s.at(0) == kwsInto {
		s.i++
	}
	if from, to, ok := s.name(); ok {
		s.addTarget(op, from, to, kindTable)
	}
	s.rest()
}

// delete reads the three forms: DELETE FROM t, DELETE t1 FROM refs and
// DELETE FROM t1 USING refs; the targets are the tables of the references.
func (s *summarizer) delete() {
	op := s.addOp(kwsDelete)
	s.i++
	s.skipModifiers()
	if s.at(0) != kwsFrom {
		for !s.done() && s.at(0) != kwsFrom && s.at(0) != ';' && s.at(0) != ')' {
			s.i++
		}
	}
	if s.at(0) == kwsFrom {
		s.i++
		mark := len(s.targets)
		s.tableRefs(op)
		if s.at(0) == kwsUsing {
			s.dropTargets(op, mark)
			s.i++
			s.tableRefs(op)
		}
	}
	s.rest()
}

// dropTargets forgets the targets of op from index mark on.
func (s *summarizer) dropTargets(op, mark int) {
	if op < 0 {
		return
	}
	o := &s.ops[op]
	j := o.first
	o.first, o.last = -1, -1
	for j >= 0 {
		t := &s.targets[j]
		next := t.next
		t.next = -1
		if int(j) < mark {
			if o.last >= 0 {
				s.targets[o.last].next = j
			} else {
				o.first = j
			}
			o.last = j
		} else {
			t.kind = kindDead
		}
		j = next
	}
}

// ddl reads CREATE, ALTER and DROP.
func (s *summarizer) ddl(verb uint16) {
	s.i++
	// The object keyword comes after OR REPLACE, TEMPORARY, UNIQUE,
	// ALGORITHM = ..., DEFINER = ..., SQL SECURITY ...
	kind := tokNone
	for k := 0; k < 24 && !s.done(); k++ {
		t := s.at(0)
		if sumObject[t] {
			kind = t
			break
		}
		if t == ';' || t == ')' {
			break
		}
		if t == '(' {
			s.skipParen()
			continue
		}
		s.i++
	}
	if kind == tokNone {
		s.addOp(verb)
		return
	}
	s.i++
	var op int
	switch u := s.at(0); {
	case (kind == kwsLogfile || kind == kwsResource) && u == kwsGroup, kind == kwsUndo && u == kwsTablespace:
		op = s.addOp(verb, kind, u)
		s.i++
	default:
		op = s.addOp(verb, kind)
	}
	s.skipIfExists()
	switch kind {
	case kwsTable, kwsView:
		if verb == kwsDrop {
			s.nameList(op, kindTable)
			return
		}
		if from, to, ok := s.name(); ok {
			s.addTarget(op, from, to, kindTable)
		}
		s.rest()
	case kwsIndex:
		// The target is the table: index names are per table.
		for !s.done() && s.at(0) != kwsOn && s.at(0) != ';' && s.at(0) != '(' {
			s.i++
		}
		if s.at(0) == kwsOn {
			s.i++
			if from, to, ok := s.name(); ok {
				s.addTarget(op, from, to, kindTable)
			}
		}
	case kwsSchema:
		if from, to, ok := s.name(); ok {
			s.addTarget(op, from, to, kindNamespace)
		}
	case kwsProcedure, kwsFunction, kwsTrigger, kwsEvent:
		if from, to, ok := s.name(); ok {
			s.addTarget(op, from, to, kindOther)
		}
		s.stop = verb != kwsDrop // a body may follow, with statements of its own
	case kwsServer, kwsTablespace, kwsLogfile, kwsResource, kwsUndo:
		if from, to, ok := s.name(); ok {
			s.addTarget(op, from, to, kindOther)
		}
	}
}

// show reads SHOW and the keywords naming what it shows; SHOW CREATE and
// FROM or IN name targets.
func (s *summarizer) show() {
	var words [4]uint16
	n := 1
	words[0] = kwsShow
	s.i++
	for n < len(words) && sumWord[s.at(0)] && !sumShowStop[s.at(0)] {
		words[n] = s.at(0)
		n++
		s.i++
	}
	op := s.addOp(words[:n]...)
	kind := kindNamespace
	for _, w := range words[1:n] {
		if w == kwsFields || w == kwsIndex || w == kwsIndexes || w == kwsKeys {
			kind = kindTable
		}
	}
	if n >= 3 && words[1] == kwsCreate {
		k := kindOther
		if words[2] == kwsTable || words[2] == kwsView {
			k = kindTable
		}
		if from, to, ok := s.name(); ok {
			s.addTarget(op, from, to, k)
		}
	}
	for !s.done() && s.at(0) != ';' {
		if t := s.at(0); t == kwsFrom || t == kwIn {
			s.i++
			if from, to, ok := s.name(); ok {
				s.addTarget(op, from, to, kind)
			}
			kind = kindNamespace // SHOW COLUMNS FROM t FROM db
			continue
		}
		s.i++
	}
}

// explain reads EXPLAIN, DESCRIBE and DESC: of a statement, or of a table.
func (s *summarizer) explain() {
	op := s.addOp(kwsExplain)
	s.i++
	for k := 0; k < 8; k++ {
		switch s.at(0) {
		case kwsAnalyze, kwsExtended, kwsPartitions:
			s.i++
			continue
		case kwsFormat:
			s.i++
			if s.at(0) == tokEQ {
				s.i += 2
			}
			continue
		case kwsInto:
			s.i += 2
			continue
		}
		break
	}
	switch s.at(0) {
	case kwsSelect, kwWith, kwsInsert, kwsReplace, kwsUpdate, kwsDelete, kwsTable, kwsValues, '(':
		s.statement(false)
	case kwsFor:
	default:
		if from, to, ok := s.name(); ok && op >= 0 {
			s.addTarget(op, from, to, kindTable)
		}
	}
}

// lock reads LOCK TABLES t1 READ, t2 AS a WRITE and LOCK INSTANCE.
func (s *summarizer) lock() {
	u := s.at(1)
	if u != kwsTable && u != kwsTables {
		if sumWord[u] {
			s.addOp(kwsLock, u)
		} else {
			s.addOp(kwsLock)
		}
		return
	}
	op := s.addOp(kwsLock, u)
	s.i += 2
	for !s.done() {
		if from, to, ok := s.name(); ok {
			s.addTarget(op, from, to, kindTable)
		}
		for !s.done() && s.at(0) != ',' && s.at(0) != ';' {
			s.i++
		}
		if s.at(0) != ',' {
			return
		}
		s.i++
	}
}

// loadData reads LOAD DATA and LOAD XML: the target follows INTO TABLE.
func (s *summarizer) loadData() {
	var op int
	if u := s.at(1); sumWord[u] {
		op = s.addOp(kwsLoad, u)
	} else {
		op = s.addOp(kwsLoad)
	}
	for !s.done() && s.at(0) != kwsInto && s.at(0) != ';' {
		s.i++
	}
	if s.at(0) == kwsInto && s.at(1) == kwsTable {
		s.i += 2
		if from, to, ok := s.name(); ok {
			s.addTarget(op, from, to, kindTable)
		}
	}
}

// render writes the attributes: the summary, cut at a part boundary at
// MaxSummaryLength bytes, then the operation, the collection and the
// procedure, all in one string.
func (s *summarizer) render() Summary {
	out := s.out[:0]
	sep := func() {
		if len(out) > 0 {
			out = append(out, ' ')
		}
	}
	full := false
	for oi := range s.ops {
		o := &s.ops[oi]
		mark := len(out)
		sep()
		out = appendWords(out, o)
		if len(out) > MaxSummaryLength {
			out = out[:mark]
			break
		}
		for j := o.first; j >= 0; j = s.targets[j].next {
			mark := len(out)
			out = append(out, ' ')
			out = s.appendName(out, s.targets[j])
			if len(out) > MaxSummaryLength {
				out = out[:mark]
				full = true
				break
			}
		}
		if full {
			break
		}
	}
	nSum := len(out)

	main := s.main
	if main < 0 && len(s.ops) > 0 {
		main = 0
	}
	if main >= 0 {
		out = appendWords(out, &s.ops[main])
	}
	nOp := len(out)

	// The collection: the one table the statement names, if one.
	coll := -1
	for j := range s.targets {
		t := &s.targets[j]
		if t.kind != kindTable {
			continue
		}
		if coll < 0 {
			coll = j
		} else if c := &s.targets[coll]; !s.sameName(int(c.from), int(c.to), int(t.from), int(t.to)) {
			coll = -1
			break
		}
	}
	if coll >= 0 {
		out = s.appendName(out, s.targets[coll])
		if len(out)-nOp > MaxSummaryLength {
			out = out[:nOp]
		}
	}
	nColl := len(out)

	if main >= 0 && s.ops[main].words[0] == kwsCall {
		if j := s.ops[main].first; j >= 0 {
			out = s.appendName(out, s.targets[j])
			if len(out)-nColl > MaxSummaryLength {
				out = out[:nColl]
			}
		}
	}
	s.out = out
	if len(out) == 0 {
		return Summary{}
	}
	all := string(out)
	return Summary{
		Summary:         all[:nSum],
		Operation:       all[nSum:nOp],
		Collection:      all[nOp:nColl],
		StoredProcedure: all[nColl:],
	}
}

func appendWords(out []byte, o *sumOp) []byte {
	for k := 0; k < int(o.n); k++ {
		if k > 0 {
			out = append(out, ' ')
		}
		out = append(out, sumSpelling[o.words[k]]...)
	}
	return out
}

// appendName writes a target's name: its parts as written, joined by
// '.'; a part that is not a plain word is back-quoted.
func (s *summarizer) appendName(out []byte, t sumTarget) []byte {
	for k := t.from; k < t.to; k++ {
		tk := s.toks[k]
		switch {
		case tk.tok == tokIdent:
			out = appendIdent(out, s.buf[tk.off:tk.off+tk.n])
		case tk.tok == '.':
			out = append(out, '.')
		case sumWord[tk.tok]:
			out = append(out, sumSpelling[tk.tok]...)
		}
	}
	return out
}

// appendIdent writes an identifier bare when it is a plain word (letters,
// digits, '_', '$', other characters than ASCII), and back-quoted as MySQL
// quotes it otherwise; bytes that are not UTF-8 become U+FFFD.
func appendIdent(out, name []byte) []byte {
	plain := len(name) > 0 && utf8.Valid(name)
	for _, c := range name {
		if !identChar[c] {
			plain = false
			break
		}
	}
	if plain {
		return append(out, name...)
	}
	out = append(out, '`')
	for i := 0; i < len(name); {
		c := name[i]
		if c < utf8.RuneSelf {
			if c == '`' {
				out = append(out, '`')
			}
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(name[i:])
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, name[i:i+size]...)
		}
		i += size
	}
	return append(out, '`')
}

// Keywords the summarizer reads, and its token tables.
var (
	summaryOnce sync.Once

	kwsSelect, kwsInsert, kwsReplace, kwsUpdate, kwsDelete, kwsCall           uint16
	kwsCreate, kwsAlter, kwsDrop, kwsTruncate, kwsRename, kwsTable, kwsTables uint16
	kwsBegin, kwsStart, kwsCommit, kwsRollback, kwsSavepoint, kwsRelease      uint16
	kwsWork, kwsTo, kwsSet, kwsShow, kwsUse, kwsExplain, kwsDesc, kwsLock     uint16
	kwsUnlock, kwsLoad, kwsAnalyze, kwsOptimize, kwsCheck, kwsRepair          uint16
	kwsChecksum, kwsHandler, kwsValues, kwsDo, kwsPrepare, kwsExecute         uint16
	kwsDeallocate, kwsGrant, kwsRevoke, kwsRecursive, kwsAs, kwsFrom, kwsInto uint16
	kwsJoin, kwsStraightJoin, kwsOn, kwsUsing, kwsLateral, kwsIf, kwsExists   uint16
	kwsIndex, kwsIndexes, kwsKeys, kwsFields, kwsView, kwsSchema, kwsFunction uint16
	kwsProcedure, kwsTrigger, kwsEvent, kwsServer, kwsTablespace, kwsLogfile  uint16
	kwsResource, kwsUndo, kwsGroup, kwsUser, kwsFor, kwsFormat, kwsExtended   uint16
	kwsPartitions, kwsNoWriteToBinlog, kwsLocal                               uint16

	sumWord       [maxToken]bool   // a keyword
	sumSpelling   [maxToken]string // how a keyword prints in a summary
	sumNotName    [maxToken]bool   // a keyword that is never a table name where one may come
	sumEndsTables [maxToken]bool   // a keyword that ends table references
	sumJoinWord   [maxToken]bool   // INNER, LEFT, ...: before JOIN
	sumModifier   [maxToken]bool   // LOW_PRIORITY, IGNORE, ...: after INSERT, UPDATE, DELETE
	sumObject     [maxToken]bool   // the object of CREATE, ALTER, DROP
	sumShowStop   [maxToken]bool   // ends the keywords after SHOW

	// sumRespell maps the DIGEST_TEXT spelling of a keyword that lexes
	// back as an identifier to the keyword: DIGEST_TEXT prints USER as
	// SYSTEM_USER, a function name that is an identifier without its '('.
	sumRespell    = map[string]uint16{}
	sumRespellMax int
)

func initSummary() {
	// A keyword prints in its shortest spelling, the canonical one on a
	// tie: EXPLAIN for DESCRIBE, SCHEMA for DATABASE, USER for
	// SYSTEM_USER. Raw SQL and its DIGEST_TEXT carry the same token, so
	// both print the same.
	for _, e := range mainKeywords.slots {
		if e.name == "" {
			continue
		}
		sumWord[e.tok] = true
		cur := sumSpelling[e.tok]
		if cur == "" || len(e.name) < len(cur) || len(e.name) == len(cur) && e.name == tokText[e.tok] {
			sumSpelling[e.tok] = e.name
		}
	}
	for _, e := range mainKeywords.slots {
		if e.name == "" || e.funcOnly {
			continue
		}
		if p := mainKeywords.find(tokText[e.tok]); p != nil && p.funcOnly {
			sumRespell[tokText[e.tok]] = e.tok
			sumRespellMax = max(sumRespellMax, len(tokText[e.tok]))
		}
	}
	k := mustKeyword
	kwsSelect, kwsInsert, kwsReplace, kwsUpdate, kwsDelete, kwsCall = k("SELECT"), k("INSERT"), k("REPLACE"), k("UPDATE"), k("DELETE"), k("CALL")
	kwsCreate, kwsAlter, kwsDrop, kwsTruncate, kwsRename, kwsTable, kwsTables = k("CREATE"), k("ALTER"), k("DROP"), k("TRUNCATE"), k("RENAME"), k("TABLE"), k("TABLES")
	kwsBegin, kwsStart, kwsCommit, kwsRollback, kwsSavepoint, kwsRelease = k("BEGIN"), k("START"), k("COMMIT"), k("ROLLBACK"), k("SAVEPOINT"), k("RELEASE")
	kwsWork, kwsTo, kwsSet, kwsShow, kwsUse, kwsExplain, kwsDesc, kwsLock = k("WORK"), k("TO"), k("SET"), k("SHOW"), k("USE"), k("EXPLAIN"), k("DESC"), k("LOCK")
	kwsUnlock, kwsLoad, kwsAnalyze, kwsOptimize, kwsCheck, kwsRepair = k("UNLOCK"), k("LOAD"), k("ANALYZE"), k("OPTIMIZE"), k("CHECK"), k("REPAIR")
	kwsChecksum, kwsHandler, kwsValues, kwsDo, kwsPrepare, kwsExecute = k("CHECKSUM"), k("HANDLER"), k("VALUES"), k("DO"), k("PREPARE"), k("EXECUTE")
	kwsDeallocate, kwsGrant, kwsRevoke, kwsRecursive, kwsAs, kwsFrom, kwsInto = k("DEALLOCATE"), k("GRANT"), k("REVOKE"), k("RECURSIVE"), k("AS"), k("FROM"), k("INTO")
	kwsJoin, kwsStraightJoin, kwsOn, kwsUsing, kwsLateral, kwsIf, kwsExists = k("JOIN"), k("STRAIGHT_JOIN"), k("ON"), k("USING"), k("LATERAL"), k("IF"), k("EXISTS")
	kwsIndex, kwsIndexes, kwsKeys, kwsFields, kwsView, kwsSchema, kwsFunction = k("INDEX"), k("INDEXES"), k("KEYS"), k("FIELDS"), k("VIEW"), k("SCHEMA"), k("FUNCTION")
	kwsProcedure, kwsTrigger, kwsEvent, kwsServer, kwsTablespace, kwsLogfile = k("PROCEDURE"), k("TRIGGER"), k("EVENT"), k("SERVER"), k("TABLESPACE"), k("LOGFILE")
	kwsResource, kwsUndo, kwsGroup, kwsUser, kwsFor, kwsFormat, kwsExtended = k("RESOURCE"), k("UNDO"), k("GROUP"), k("USER"), k("FOR"), k("FORMAT"), k("EXTENDED")
	kwsPartitions, kwsNoWriteToBinlog, kwsLocal = k("PARTITIONS"), k("NO_WRITE_TO_BINLOG"), k("LOCAL")

	set := func(table *[maxToken]bool, words ...string) {
		for _, w := range words {
			table[k(w)] = true
		}
	}
	set(&sumEndsTables, "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "WINDOW",
		"UNION", "EXCEPT", "INTERSECT", "FOR", "LOCK", "INTO", "SET", "VALUES",
		"SELECT", "PROCEDURE", "WITH")
	sumEndsTables[tokWithRollup] = true
	set(&sumJoinWord, "INNER", "CROSS", "LEFT", "RIGHT", "NATURAL", "OUTER")
	set(&sumModifier, "LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY", "IGNORE", "QUICK")
	set(&sumObject, "TABLE", "INDEX", "VIEW", "SCHEMA", "PROCEDURE", "FUNCTION",
		"TRIGGER", "EVENT", "USER", "ROLE", "SERVER", "TABLESPACE", "LOGFILE",
		"RESOURCE", "UNDO", "INSTANCE", "PREPARE")
	set(&sumShowStop, "FROM", "IN", "LIKE", "WHERE", "LIMIT", "FOR")
	for t := range sumNotName {
		sumNotName[t] = sumEndsTables[t] || sumJoinWord[t] || sumModifier[t]
	}
	set(&sumNotName, "JOIN", "STRAIGHT_JOIN", "ON", "USING", "FROM", "DUAL",
		"LATERAL", "AS", "IF", "NOT", "EXISTS", "TABLE", "PARTITION", "USE",
		"FORCE", "INDEX", "KEY", "DEFAULT", "NULL", "ALL", "DISTINCT", "TO",
		"LIKE", "RECURSIVE", "JSON_TABLE", "INSERT", "REPLACE", "UPDATE",
		"DELETE", "CREATE", "DROP", "ALTER", "CALL", "TABLES")
}
