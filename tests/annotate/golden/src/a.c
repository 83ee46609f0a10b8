/* a.c */
int helper(int);
int main(void) {
	return helper(1);
}

/* padding */
/* padding */
/* padding */
int helper(int x)
{
	return x * 2;
}
