"""Front door: an MCP server over stdio, serving the command table's commands as tools."""
