/* Stand-in for the SDK's api/@ohos.taskpool.d.ts (subset). */
declare namespace taskpool {
  enum Priority {
    HIGH = 0,
    MEDIUM = 1,
    LOW = 2,
    IDLE = 3
  }

  class Task {
    constructor(func: Function, ...args: Object[]);
    constructor(name: string, func: Function, ...args: Object[]);
    function: Function;
    arguments?: Object[];
    name: string;
  }

  function execute(func: Function, ...args: Object[]): Promise<Object>;
  function execute(task: Task, priority?: Priority): Promise<Object>;
}

export default taskpool;
