package pfssql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"io"
)

// drv wraps a driver. It always has driver.DriverContext: for a driver
// without it, its connector opens connections with the driver's Open, as
// database/sql's own does, so every connection of a database/sql handle
// shares one configuration, which the DB level reads (NewDB).
type drv struct {
	d   driver.Driver
	cfg *config
}

// Wrap returns a driver whose connections instrument d's: every Exec,
// Query, Prepare, prepared statement execution, Begin, Commit and Rollback
// is a statement event, and each transaction a transaction event, of the
// schema WithSchema gives. Register it with sql.Register, or use Open.
func Wrap(d driver.Driver, opts ...Option) driver.Driver {
	return &drv{d: d, cfg: newConfig(d, opts)}
}

func (d *drv) Open(dsn string) (driver.Conn, error) {
	c, err := d.d.Open(dsn)
	if err != nil {
		return nil, err
	}
	return wrapConn(c, d.cfg.forDSN(dsn)), nil
}

func (d *drv) OpenConnector(dsn string) (driver.Connector, error) {
	cfg := d.cfg.forDSN(dsn)
	if dc, ok := d.d.(driver.DriverContext); ok {
		c, err := dc.OpenConnector(dsn)
		if err != nil {
			return nil, err
		}
		return wrapConnector(c, cfg), nil
	}
	return wrapConnector(dsnConnector{dsn: dsn, d: d.d}, cfg), nil
}

// dsnConnector is database/sql's connector for a driver without
// DriverContext.
type dsnConnector struct {
	dsn string
	d   driver.Driver
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.dsn) }
func (c dsnConnector) Driver() driver.Driver                        { return c.d }

// connector wraps a driver.Connector; connectorCloser is it for a
// connector with io.Closer, which sql.DB.Close calls.
type connector struct {
	c   driver.Connector
	cfg *config
	d   *drv // what Driver returns: the wrapped driver, with this connector's configuration
}

type connectorCloser struct{ *connector }

func (c connectorCloser) Close() error { return c.c.(io.Closer).Close() }

// WrapConnector returns a connector whose connections instrument c's, as
// Wrap's do. Give it to sql.OpenDB, or use OpenDB.
func WrapConnector(c driver.Connector, opts ...Option) driver.Connector {
	return wrapConnector(c, newConfig(c.Driver(), opts).forDSN(""))
}

func wrapConnector(c driver.Connector, cfg *config) driver.Connector {
	w := &connector{c: c, cfg: cfg, d: &drv{d: c.Driver(), cfg: cfg}}
	if _, ok := c.(io.Closer); ok {
		return connectorCloser{w}
	}
	return w
}

func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.c.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return wrapConn(conn, c.cfg), nil
}

func (c *connector) Driver() driver.Driver { return c.d }

// Open opens a database as sql.Open(driverName, dsn) would, through a
// connector of the wrapped driver (sql.OpenDB): nothing is registered
// with database/sql. The driver name also tells how to read the DSN's
// database name (see WithCurrentSchema). As sql.Open, it connects to
// nothing: the first statement does.
func Open(driverName, dsn string, opts ...Option) (*sql.DB, error) {
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		return nil, err
	}
	d := db.Driver()
	if err := db.Close(); err != nil {
		return nil, err
	}
	w := &drv{d: d, cfg: newConfig(d, append([]Option{withDialect(driverName)}, opts...))}
	c, err := w.OpenConnector(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// OpenDB opens a database on the connector c, wrapped (sql.OpenDB of
// WrapConnector).
func OpenDB(c driver.Connector, opts ...Option) *sql.DB {
	return sql.OpenDB(WrapConnector(c, opts...))
}
