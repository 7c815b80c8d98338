<?xml version="1.0" encoding="utf-8"?>
<!-- How a browser shows kg's Atom feeds of new bests (templates/sota.atom): a page that
     lists the entries with their links; feed readers read the Atom itself. -->
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
  xmlns:a="http://www.w3.org/2005/Atom" exclude-result-prefixes="a">
<xsl:output method="html" encoding="utf-8" doctype-system="about:legacy-compat"/>
<xsl:template match="/a:feed">
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title><xsl:value-of select="a:title"/></title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:84rem;padding:1rem 1.5rem;color:#1d232a}
header{border-bottom:1px solid #d6dbe0;padding-bottom:.4rem;margin-bottom:1rem;display:flex;flex-wrap:wrap;gap:.3rem 1rem}
header a{color:#5b6570}header .brand{font-weight:700;color:#1d232a}
a{color:#0b5cad;text-decoration:none}a:hover{text-decoration:underline}
h1{font-size:1.5rem;margin:.2rem 0}.meta{color:#5b6570;font-size:13px}
.note{background:#f6f8fa;border:1px solid #e6e9ec;padding:.4rem .6rem;font-size:13px}
ol{padding-left:1.4rem}li{margin:.6rem 0}.d{color:#8a939c;font-size:12px;white-space:nowrap}
footer{margin-top:2rem;border-top:1px solid #d6dbe0;padding-top:.5rem;color:#5b6570;font-size:13px}
</style>
</head>
<body>
<header><a class="brand" href="/">kg</a><a href="/query">SPARQL query</a><a href="/queries">named queries</a></header>
<h1><xsl:value-of select="a:title"/></h1>
<p class="meta"><xsl:value-of select="a:subtitle"/></p>
<p class="note">This is an Atom feed: give its address to a feed reader to follow the new bests.
<xsl:if test="a:link[@rel='alternate']"> The page it is about: <a href="{a:link[@rel='alternate']/@href}"><xsl:value-of select="a:link[@rel='alternate']/@href"/></a>.</xsl:if></p>
<ol>
<xsl:for-each select="a:entry">
<li><a href="{a:link[@rel='alternate']/@href}"><xsl:value-of select="a:title"/></a>
<xsl:text> </xsl:text><span class="d"><xsl:value-of select="substring(a:updated, 1, 10)"/></span>
<xsl:if test="a:link[@rel='related']"><div class="meta">Paper: <a href="{a:link[@rel='related']/@href}"><xsl:value-of select="a:link[@rel='related']/@title"/></a></div></xsl:if>
</li>
</xsl:for-each>
</ol>
<p class="meta">
<xsl:if test="a:link[@rel='previous']"><a href="{a:link[@rel='previous']/@href}">← newer</a><xsl:text> </xsl:text></xsl:if>
<xsl:if test="a:link[@rel='next']"><a href="{a:link[@rel='next']/@href}">older →</a></xsl:if>
</p>
<footer><xsl:value-of select="a:rights"/></footer>
</body>
</html>
</xsl:template>
</xsl:stylesheet>
