/* real-pkg: libxml-2.0
 * Real-library driver: libxml2.  work() parses a small document from
 * memory, walks its tree and frees it.  With the argument "0" main skips
 * work() (xmlInitParser runs outside work either way). */
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <string.h>

static const char doc_text[] =
	"<?xml version=\"1.0\"?>\n<lib name=\"t\">"
	"<book id=\"1\"><title>One</title><pages>120</pages></book>"
	"<book id=\"2\"><title>Two &amp; three</title><pages>80</pages></book>"
	"<book id=\"3\"><title>Four</title><pages>310</pages></book>"
	"<!-- a comment --><note><![CDATA[raw <text>]]></note></lib>\n";
static long nodes;

static void walk(xmlNode *n)
{
	for (; n; n = n->next) {
		nodes++;
		walk(n->children);
	}
}

__attribute__((noinline)) static void work(void)
{
	xmlDoc *doc = xmlReadMemory(doc_text, (int)strlen(doc_text),
				    "t.xml", NULL, XML_PARSE_NONET);
	if (!doc)
		return;
	walk(xmlDocGetRootElement(doc));
	xmlFreeDoc(doc);
}

int main(int argc, char **argv)
{
	xmlInitParser();
	if (argc < 2 || argv[1][0] != '0')
		work();
	printf("%ld\n", nodes);
	return 0;
}
