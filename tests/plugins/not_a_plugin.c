/* An ordinary shared library without edgemm_plugin_get_api: loading it as a plugin must fail
 * naming the missing entry point. */

int not_a_plugin_answer(void);
int not_a_plugin_answer(void) { return 42; }
