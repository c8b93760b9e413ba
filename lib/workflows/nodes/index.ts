/** Which runner carries out each leaf node; control nodes (iterate, route, handle, group, context) are the executor's. */
import { runExtractor } from '../extractor.ts';
import { runPinnedAction } from '../pinned.ts';
import type { WorkflowNode } from '../schema.ts';
import type { NodeRunner } from '../types.ts';
import { runAgentNode, runAiAction, runAiQuery, runCognition } from './ai.ts';
import { runBrowserAction, runValidate } from './browser.ts';
import { runTransform } from './transform.ts';

export function runnerFor(node: WorkflowNode): NodeRunner | undefined {
  switch (node.type) {
    case 'browser_action':
      return 'target' in node.config ? runPinnedAction : runBrowserAction;
    case 'browser_query':
      return node.config.method === 'extract' ? runExtractor : runValidate;
    case 'browser_ai_action':
      return runAiAction;
    case 'browser_ai_query':
      return runAiQuery;
    case 'transform':
      return runTransform;
    case 'cognition':
      return runCognition;
    case 'agent':
      return runAgentNode;
    default:
      return undefined;
  }
}
