/**
 * A vitest reporter that ends each run with one plain line, `vitest: N passed, N failed, N skipped`,
 * so CI logs carry a runner-independent count of what actually ran.
 */
import type { Reporter, TestModule } from "vitest/node";

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
    }
    console.log(`vitest: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  }
}
