package mysqlpfs

// RunningStatements returns the number of statements s runs.
func RunningStatements(s *Server) int { return s.dog.running() }
