"""kg over the Model Context Protocol: tools, resources and prompts for AI assistants
(docs/mcp.md). `kg mcp` serves it over stdio and `kg serve` at /mcp; both run every tool
call in a query worker, under the same limits as the SPARQL endpoint (kg.serve.mcp).

This layer sits above the library and below serve and cli. The `mcp` SDK is imported only
by kg.mcp.server, when a server is built.
"""
