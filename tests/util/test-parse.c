/* parse_bool: the words each front end takes, and nothing else. */
#include "parse.h"

#include "testutil.h"

int main(void)
{
	bool b = false;

	CHECK(parse_bool("yes", PARSE_YES_NO, &b) == 0 && b);
	CHECK(parse_bool("no", PARSE_YES_NO, &b) == 0 && !b);
	b = true;
	CHECK(parse_bool("on", PARSE_YES_NO, &b) < 0 && b, "on is the tracer's");
	CHECK(parse_bool("off", PARSE_YES_NO, &b) < 0 && b, "off is the tracer's");
	CHECK(parse_bool("on", PARSE_YES_NO_ON_OFF, &b) == 0 && b);
	CHECK(parse_bool("off", PARSE_YES_NO_ON_OFF, &b) == 0 && !b);
	CHECK(parse_bool("yes", PARSE_YES_NO_ON_OFF, &b) == 0 && b);
	CHECK(parse_bool("no", PARSE_YES_NO_ON_OFF, &b) == 0 && !b);
	CHECK(parse_bool("", PARSE_YES_NO_ON_OFF, &b) < 0);
	CHECK(parse_bool("Yes", PARSE_YES_NO_ON_OFF, &b) < 0, "case matters");
	CHECK(parse_bool("yes ", PARSE_YES_NO_ON_OFF, &b) < 0);
	CHECK(parse_bool("1", PARSE_YES_NO_ON_OFF, &b) < 0);
	return test_summary("test-parse");
}
