package mysqlpfs

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/otelpfs/otelpfs/pfscore"
)

// The databases the server has. information_schema is the engine's, over
// these two; there is no other (the engine's own mysql database, which
// holds the one account, is closed to that account).
const (
	PerformanceSchema = "performance_schema"
	Sys               = "sys"
)

// A provider is the engine's catalog of databases: performance_schema and
// sys, and the sys functions.
type provider struct {
	pfs   *pfsDatabase
	sys   *sysDatabase
	funcs map[string]sql.Function
}

var (
	_ sql.DatabaseProvider = (*provider)(nil)
	_ sql.FunctionProvider = (*provider)(nil)
)

func newProvider(src pfscore.Tables, changes bool, maxPacket int64) (*provider, error) {
	cat, err := src.Catalog()
	if err != nil {
		return nil, fmt.Errorf("mysqlpfs: reading the catalog: %w", err)
	}
	pfs := &pfsDatabase{tables: make(map[string]*table, len(cat))}
	for _, info := range cat {
		name := strings.ToLower(info.Name)
		pfs.tables[name] = newTable(src, info, changes)
		pfs.names = append(pfs.names, info.Name)
	}
	sort.Strings(pfs.names)
	return &provider{pfs: pfs, sys: newSysDatabase(pfs), funcs: functions(src, maxPacket)}, nil
}

func (p *provider) Database(_ *sql.Context, name string) (sql.Database, error) {
	switch strings.ToLower(name) {
	case PerformanceSchema:
		return p.pfs, nil
	case Sys:
		return p.sys, nil
	}
	return nil, sql.ErrDatabaseNotFound.New(name)
}

func (p *provider) HasDatabase(_ *sql.Context, name string) bool {
	n := strings.ToLower(name)
	return n == PerformanceSchema || n == Sys
}

func (p *provider) AllDatabases(*sql.Context) []sql.Database {
	return []sql.Database{p.pfs, p.sys}
}

func (p *provider) Function(_ *sql.Context, name string) (sql.Function, bool) {
	f, ok := p.funcs[strings.ToLower(name)]
	return f, ok
}

// pfsDatabase is performance_schema: a table per pfscore table.
type pfsDatabase struct {
	tables map[string]*table // by lower-case name
	names  []string
}

func (d *pfsDatabase) Name() string { return PerformanceSchema }

func (d *pfsDatabase) GetTableInsensitive(_ *sql.Context, name string) (sql.Table, bool, error) {
	t, ok := d.tables[strings.ToLower(name)]
	if !ok {
		return nil, false, nil
	}
	return t, true, nil
}

func (d *pfsDatabase) GetTableNames(*sql.Context) ([]string, error) {
	return append([]string(nil), d.names...), nil
}

// performance_schema has no views, and takes none.
var _ sql.ViewDatabase = (*pfsDatabase)(nil)

func (d *pfsDatabase) CreateView(ctx *sql.Context, name, _, _ string) error {
	return denied(ctx, "CREATE VIEW", name, "")
}

func (d *pfsDatabase) DropView(ctx *sql.Context, name string) error {
	return denied(ctx, "DROP", name, "")
}

func (d *pfsDatabase) GetViewDefinition(*sql.Context, string) (sql.ViewDefinition, bool, error) {
	return sql.ViewDefinition{}, false, nil
}

func (d *pfsDatabase) AllViews(*sql.Context) ([]sql.ViewDefinition, error) { return nil, nil }

// performance_schema has no triggers, and takes none.
var _ sql.TriggerDatabase = (*pfsDatabase)(nil)

func (d *pfsDatabase) GetTriggers(*sql.Context) ([]sql.TriggerDefinition, error) { return nil, nil }

func (d *pfsDatabase) CreateTrigger(ctx *sql.Context, def sql.TriggerDefinition) error {
	return denied(ctx, "TRIGGER", def.Name, "")
}

func (d *pfsDatabase) DropTrigger(ctx *sql.Context, name string) error {
	return denied(ctx, "TRIGGER", name, "")
}

// sysDatabase is sys: views only.
type sysDatabase struct {
	views map[string]sql.ViewDefinition // by lower-case name
	names []string
}

var _ sql.ViewDatabase = (*sysDatabase)(nil)

// newSysDatabase defines the sys views whose tables pfs has.
func newSysDatabase(pfs *pfsDatabase) *sysDatabase {
	d := &sysDatabase{views: map[string]sql.ViewDefinition{}}
	for _, v := range sysViews {
		if !pfs.hasAll(v.needs) {
			continue
		}
		d.views[v.name] = sql.ViewDefinition{
			Name:                v.name,
			TextDefinition:      v.query,
			CreateViewStatement: "CREATE VIEW `sys`.`" + v.name + "` AS " + v.query,
		}
		d.names = append(d.names, v.name)
	}
	sort.Strings(d.names)
	return d
}

func (d *pfsDatabase) hasAll(tables []string) bool {
	for _, t := range tables {
		if _, ok := d.tables[t]; !ok {
			return false
		}
	}
	return true
}

func (d *sysDatabase) Name() string { return Sys }

func (d *sysDatabase) GetTableInsensitive(*sql.Context, string) (sql.Table, bool, error) {
	return nil, false, nil
}

func (d *sysDatabase) GetTableNames(*sql.Context) ([]string, error) { return nil, nil }

func (d *sysDatabase) CreateView(ctx *sql.Context, name, _, _ string) error {
	return denied(ctx, "CREATE VIEW", name, "the sys schema is otelpfs's own")
}

func (d *sysDatabase) DropView(ctx *sql.Context, name string) error {
	return denied(ctx, "DROP", name, "the sys schema is otelpfs's own")
}

func (d *sysDatabase) GetViewDefinition(_ *sql.Context, name string) (sql.ViewDefinition, bool, error) {
	v, ok := d.views[strings.ToLower(name)]
	return v, ok, nil
}

func (d *sysDatabase) AllViews(*sql.Context) ([]sql.ViewDefinition, error) {
	out := make([]sql.ViewDefinition, 0, len(d.names))
	for _, n := range d.names {
		out = append(out, d.views[n])
	}
	return out, nil
}
